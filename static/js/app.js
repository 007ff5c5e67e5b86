// gpu-sizer progressive enhancement. Everything works without it: the wizard is a plain GET form.
(function () {
  "use strict";

  // Preset list: a filter box above the <select>, hidden until this script runs.
  function presetFilter() {
    var wrap = document.querySelector(".preset-filter");
    var input = document.getElementById("preset-filter");
    var list = document.getElementById("f-preset");
    if (!wrap || !input || !list) return;
    wrap.hidden = false;
    input.addEventListener("input", function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      Array.prototype.forEach.call(list.options, function (option) {
        var text = option.getAttribute("data-search") || option.text.toLowerCase();
        option.hidden = !words.every(function (w) { return text.indexOf(w) !== -1; });
      });
    });
  }

  // Model source: show only the panel of the chosen way to describe the model.
  function sourcePanels() {
    var radios = document.querySelectorAll('input[name="source"]');
    var panels = document.querySelectorAll(".source-panel");
    if (!radios.length || !panels.length) return;
    function update() {
      var chosen = document.querySelector('input[name="source"]:checked');
      var value = chosen ? chosen.value : "preset";
      Array.prototype.forEach.call(panels, function (panel) {
        panel.hidden = panel.getAttribute("data-source") !== value;
      });
    }
    Array.prototype.forEach.call(radios, function (radio) { radio.addEventListener("change", update); });
    update();
  }

  // Copy buttons next to the JSON body and the curl command.
  function copyButtons() {
    var buttons = document.querySelectorAll("button.copy[data-copy]");
    Array.prototype.forEach.call(buttons, function (button) {
      var target = document.getElementById(button.getAttribute("data-copy"));
      if (!target || !navigator.clipboard) return;
      button.hidden = false;
      var label = button.textContent;
      button.addEventListener("click", function () {
        navigator.clipboard.writeText(target.textContent).then(function () {
          button.textContent = button.getAttribute("data-copied") || label;
          window.setTimeout(function () { button.textContent = label; }, 2000);
        });
      });
    });
  }

  // After a failed submit, move focus to the error summary so keyboard and screen-reader users hear it.
  function focusErrors() {
    var summary = document.getElementById("error-summary");
    if (summary) summary.focus();
  }

  function start() {
    presetFilter();
    sourcePanels();
    copyButtons();
    focusErrors();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
