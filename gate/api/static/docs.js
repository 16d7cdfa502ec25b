// The API's interactive documentation: Swagger UI from the service's own files, started here rather than in an
// inline script so the page keeps the service's content security policy (scripts from the same origin only).
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
});
