// Seating plan: selecting a block (click, or Enter on the keyboard) shows its details.
function showBlock(plan, block) {
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
document.addEventListener("keydown", (event) => {
  if (event.key !== "Enter" && event.key !== " ") return;
  const block = event.target.closest("[data-plan] .block");
  if (block) {
    event.preventDefault();
    showBlock(block.closest("[data-plan]"), block);
  }
});
