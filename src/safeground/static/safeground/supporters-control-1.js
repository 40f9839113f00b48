// The control room's map: outline the blocks with supporters' reports waiting. Run each time the
// queue's fragment is swapped in (htmx runs a fragment's scripts), so the outlines follow it.
(() => {
  const panel = document.querySelector("[data-supporters-panel]");
  const waiting = new Set((panel?.dataset.supporterBlocks || "").split(" ").filter(Boolean));
  for (const block of document.querySelectorAll("[data-plan] g.block[data-block]")) {
    block.classList.toggle("supporter-reported", waiting.has(block.dataset.block));
  }
})();
