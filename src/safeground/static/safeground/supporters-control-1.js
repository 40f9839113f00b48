// The control room's map: outline the blocks with supporters' reports waiting. Run each time the
// queue's fragment is swapped in (htmx runs a fragment's scripts), so the outlines follow it.
(() => {
  const panel = document.querySelector("[data-supporters-panel]");
  const waiting = new Set((panel?.dataset.supporterBlocks || "").split(" ").filter(Boolean));
  for (const block of document.querySelectorAll("[data-plan] g.block[data-block]")) {
    block.classList.toggle("supporter-reported", waiting.has(block.dataset.block));
  }
})();

// The queue is paged: a live refresh of the panel (its container's own request) asks for the page
// being read, not the first. Registered once, however often the fragment is swapped in.
if (!window.supportersQueuePaged) {
  window.supportersQueuePaged = true;
  document.addEventListener("htmx:configRequest", (event) => {
    const panel = event.detail.elt.querySelector?.(":scope > [data-supporters-panel]");
    if (panel && event.detail.parameters.page === undefined) event.detail.parameters.page = panel.dataset.page;
  });
}
