-- runara.report_render: report.md and report.html from a report's view (see report.lua's
-- write and report_document.lua). Pure functions: text in, text out. The formats are in
-- report_markdown.lua and report_html.lua, what they share in report_format.lua and the
-- report_*_rows.lua files.
local format = require("runara.report_format")
local markdown = require("runara.report_markdown")
local html = require("runara.report_html")

return {
  -- Text from a script or a machine, made inert in Markdown (a table cell's text).
  md_escape = format.md_escape,
  markdown = markdown.markdown,  -- (view) → report.md
  html = html.html,              -- (view, svg) → report.html
}
