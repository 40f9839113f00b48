// Seating plan: selecting a block (click, or Enter on the keyboard) shows its details.
function showBlock(plan, block) {
  makeCurrent(plan, block);
  plan.querySelectorAll(".block.selected").forEach((b) => b.classList.remove("selected"));
  block.classList.add("selected");
  const info = plan.querySelector("[data-block-info]");
  const d = block.dataset;
  info.replaceChildren();
  const title = document.createElement("h3");
  title.textContent = `Block ${d.name}`;
  const list = document.createElement("dl");
  for (const [label, value] of [
    ["Stand", `${d.stand}, ${d.tier}`],
    ["Zone", d.zone],
    ["Capacity", Number(d.capacity).toLocaleString("en-GB")],
  ]) {
    const dt = document.createElement("dt");
    dt.textContent = label;
    const dd = document.createElement("dd");
    dd.textContent = value;
    list.append(dt, dd);
  }
  info.append(title, list);
  plan.dispatchEvent(new CustomEvent("plan:block", { detail: { code: d.block }, bubbles: true }));
}

document.addEventListener("click", (event) => {
  const block = event.target.closest("[data-plan] .block");
  if (block) showBlock(block.closest("[data-plan]"), block);
});
// The map is one tab stop: the arrow keys move between its blocks (in the plan's order), Home and
// End to the first and last; the block last moved to is where Tab comes back to.
const STEPS = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };

function makeCurrent(plan, block) {
  plan.querySelectorAll(".block").forEach((b) => b.setAttribute("tabindex", b === block ? "0" : "-1"));
}

document.addEventListener("keydown", (event) => {
  const block = event.target.closest("[data-plan] .block");
  if (!block) return;
  const plan = block.closest("[data-plan]");
  if (event.key === "Enter" || event.key === " ") {
    event.preventDefault();
    showBlock(plan, block);
    return;
  }
  const blocks = [...plan.querySelectorAll(".block")];
  const at = blocks.indexOf(block);
  let next = null;
  if (event.key in STEPS) next = blocks[(at + STEPS[event.key] + blocks.length) % blocks.length];
  else if (event.key === "Home") next = blocks[0];
  else if (event.key === "End") next = blocks[blocks.length - 1];
  if (next) {
    event.preventDefault();
    makeCurrent(plan, next);
    next.focus();
  }
});
