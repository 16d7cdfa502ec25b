"""The web dashboard: server-rendered pages over the same data as the JSON endpoints, charts with plotly.js."""
