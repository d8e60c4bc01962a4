// Expand/collapse-all buttons. The page reads the same without script:
// every <details> then keeps its default state.
(function () {
  var bar = document.getElementById("controls");
  if (!bar) return;
  function setAll(open) {
    var ds = document.querySelectorAll("details");
    for (var i = 0; i < ds.length; i++) ds[i].open = open;
  }
  [["Expand all", true], ["Collapse all", false]].forEach(function (b) {
    var btn = document.createElement("button");
    btn.type = "button";
    btn.textContent = b[0];
    btn.addEventListener("click", function () { setAll(b[1]); });
    bar.appendChild(btn);
  });
})();
