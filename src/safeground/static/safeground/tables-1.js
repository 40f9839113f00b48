// Wide tables scroll in their own box, never the whole page (issue 38: on a 390 px phone the
// season table alone made the page 1,041 px wide). While a box scrolls it is a named region the
// keyboard can reach and scroll; a table that fits adds no tab stop. Tables drawn later (htmx
// panels, a tab opened) are boxed as they appear or change size.
{
  const headings = "h1, h2, h3, h4, h5, h6";

  // The table's name: its caption, its own label, else the heading just before it.
  function nameOf(table) {
    const own = table.caption?.textContent.trim() || table.getAttribute("aria-label");
    if (own) return own;
    for (let node = table.parentElement; node; node = node.parentElement) {
      for (let before = node.previousElementSibling; before; before = before.previousElementSibling) {
        const heading = before.matches(headings) ? before : [...before.querySelectorAll(headings)].pop();
        if (heading) return heading.textContent.trim();
      }
    }
    return table.querySelector("th")?.textContent.trim() || "";
  }

  function mark(box) {
    const scrolls = box.scrollWidth > box.clientWidth + 1;
    if (scrolls === box.hasAttribute("tabindex")) return;
    if (scrolls) {
      box.tabIndex = 0;
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", nameOf(box.querySelector("table")));
    } else {
      for (const name of ["tabindex", "role", "aria-label"]) box.removeAttribute(name);
    }
  }

  // The box changes size with the window or as its panel opens; the table as rows arrive.
  const watch = new ResizeObserver((seen) => seen.forEach((entry) => mark(entry.target.closest(".table-scroll"))));

  function box(root) {
    for (const table of root.querySelectorAll("table")) {
      if (table.parentElement.classList.contains("table-scroll")) continue;
      const wrap = document.createElement("div");
      wrap.className = "table-scroll";
      table.replaceWith(wrap);
      wrap.append(table);
      watch.observe(wrap);
      watch.observe(table);
    }
  }

  box(document);
  document.addEventListener("htmx:afterSettle", (event) => box(event.target));
}
