// gpu-sizer progressive enhancement. Everything works without it: the wizard is a plain GET form.
(function () {
  "use strict";

  // Preset list: a filter box above the <select>, hidden until this script runs. The filter narrows
  // and selects: a hidden model stays unselected, the first match is chosen (Enter submits it), and a
  // filter that matches nothing stops the submit with a message beside the box.
  function presetFilter() {
    var wrap = document.querySelector(".preset-filter");
    var input = document.getElementById("preset-filter");
    var list = document.getElementById("f-preset");
    if (!wrap || !input || !list) return;
    wrap.hidden = false;
    function visible() {
      return Array.prototype.filter.call(list.options, function (option) { return !option.hidden; });
    }
    function clearError() {
      var old = document.getElementById("err-preset-filter");
      if (old) old.parentNode.removeChild(old);
      input.removeAttribute("aria-invalid");
      input.setAttribute("aria-describedby", "hint-preset-filter");
    }
    function showError() {
      clearError();
      var message = document.createElement("p");
      message.className = "field-error";
      message.id = "err-preset-filter";
      message.textContent = (input.getAttribute("data-no-match") || "").replace("{query}", input.value.trim());
      input.parentNode.insertBefore(message, input);
      input.setAttribute("aria-invalid", "true");
      input.setAttribute("aria-describedby", "hint-preset-filter err-preset-filter");
    }
    function narrow() {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      Array.prototype.forEach.call(list.options, function (option) {
        var text = option.getAttribute("data-search") || option.text.toLowerCase();
        option.hidden = !words.every(function (w) { return text.indexOf(w) !== -1; });
      });
      var matches = visible();
      var chosen = list.options[list.selectedIndex];
      if (!chosen || chosen.hidden) list.selectedIndex = matches.length ? matches[0].index : -1;
      if (matches.length) clearError();
    }
    input.addEventListener("input", narrow);
    input.addEventListener("keydown", function (event) {
      if (event.key !== "Enter") return;
      narrow();
      var matches = visible();
      if (matches.length && input.value.trim()) list.selectedIndex = matches[0].index;
    });
    if (list.form) {
      list.form.addEventListener("submit", function (event) {
        var source = list.form.querySelector('input[name="source"]:checked');
        if (source && source.value !== "preset") return;
        var chosen = list.options[list.selectedIndex];
        if (!chosen || chosen.hidden) {
          event.preventDefault();
          showError();
          input.focus();
        }
      });
    }
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

  // The printable quote's "Print" button (hidden without JavaScript: the browser's own menu prints).
  function printButtons() {
    Array.prototype.forEach.call(document.querySelectorAll("button[data-print]"), function (button) {
      button.hidden = false;
      button.addEventListener("click", function () { window.print(); });
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
    printButtons();
    focusErrors();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
