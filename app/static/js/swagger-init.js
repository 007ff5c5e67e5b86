// Starts Swagger UI on /docs. A file, not an inline script, so the page runs under script-src 'self'.
window.addEventListener("load", function () {
  var node = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: node.getAttribute("data-openapi-url"),
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
