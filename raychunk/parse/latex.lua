-- What a reader sees of a LaTeX document, for pandoc's LaTeX reader (raychunk.parse.latex).
--
-- pandoc expands the document's own \newcommand macros and knows LaTeX's and the common packages'
-- commands; one it does not know (a class's \module{httplib2}, a macro defined in a file it is not
-- given) it keeps as raw LaTeX, which HTML drops, words and all. Here:
--   * such a command reads as the text of its arguments (\module{httplib2}: httplib2), unless it
--     sets layout, counters or files (\vspace{2mm}, \includegraphics{fig.pdf}): those give nothing;
--   * a citation reads as its keys, as the source has them ([lewis2020]): no bibliography is at hand;
--   * a \ref to a section reads as the section's number, as LaTeX prints it; to another label, as
--     the label;
--   then front_matter.lua opens the body with the title block and closes it with the notes.

local NO_TEXT = {}
for _, name in ipairs({
  "vspace", "hspace", "vskip", "hskip", "kern", "setlength", "addtolength", "setcounter",
  "addtocounter", "stepcounter", "refstepcounter", "newpage", "clearpage", "cleardoublepage",
  "pagebreak", "nopagebreak", "linebreak", "nolinebreak", "newline", "noindent", "indent",
  "centering", "raggedright", "raggedleft", "thispagestyle", "pagestyle", "pagenumbering",
  "bibliographystyle", "bibliography", "addbibresource", "printbibliography", "includegraphics",
  "input", "include", "includeonly", "subfile", "import", "subimport", "graphicspath", "label",
  "index", "glossary", "nocite", "def", "let", "newcommand", "renewcommand", "providecommand",
  "newenvironment", "renewenvironment", "DeclareMathOperator", "newtheorem", "usepackage",
  "RequirePackage", "documentclass", "maketitle", "tableofcontents", "listoffigures",
  "listoftables", "appendix", "frontmatter", "mainmatter", "backmatter", "color", "definecolor",
  "fontsize", "selectfont", "rule", "phantom", "hphantom", "vphantom", "smallskip", "medskip",
  "bigskip", "vfill", "hfill", "protect", "relax", "ignorespaces", "hypersetup", "geometry",
}) do NO_TEXT[name] = true end

local SECTION_NUMBERS = {}

-- The text of a raw command's arguments: the command names, optional arguments and braces taken out.
local function argument_text(raw)
  local name = raw:match("^\\(%a+)")
  if name and NO_TEXT[name] then
    return ""
  end
  if name and name:match("cite") then
    local keys = raw:match("(%b{})%s*$")
    return keys and ("[" .. keys:sub(2, -2):gsub("%s*,%s*", ", ") .. "]") or ""
  end
  if name and name:match("ref$") then
    local label = raw:match("(%b{})%s*$")
    label = label and label:sub(2, -2) or ""
    return SECTION_NUMBERS[label] or label
  end
  -- an environment's own name is no text; the arguments after it are (\begin{excdesc}{HttpLib2Error})
  raw = raw:gsub("\\begin%s*%b{}", " "):gsub("\\end%s*%b{}", " ")
  local s = raw:gsub("\\%a+%*?", " "):gsub("%b[]", " "):gsub("[{}]", " "):gsub("\\(.)", "%1")
  return (s:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", ""))
end

local function is_latex(el)
  return el.format == "latex" or el.format == "tex"
end

local function RawInline(el)
  if not is_latex(el) then
    return nil
  end
  local text = argument_text(el.text)
  return text == "" and {} or pandoc.Str(text)
end

local expand

-- An environment pandoc does not know, kept whole as raw LaTeX: its body read again (its own
-- unknown commands and environments as here), its leading arguments the term of a definition
-- (\begin{methoddesc}{request}{uri, method}: a signature and what it does), a beamer frame's title a
-- heading over the frame.
local function environment(raw)
  local name, after = raw:match("^%s*\\begin%s*(%b{})(.*)$")
  if not name then
    return nil
  end
  name = name:sub(2, -2)
  local body = after:match("^(.*)\\end%s*{" .. name:gsub("%p", "%%%0") .. "}%s*$")
  if not body then
    return nil
  end
  local args = {}
  while true do
    local option, rest = body:match("^[ \t]*(%b[])(.*)$")
    if option then
      body = rest
    else
      local arg, after_arg = body:match("^[ \t]*(%b{})(.*)$")
      if not arg then
        break
      end
      table.insert(args, arg:sub(2, -2))
      body = after_arg
    end
  end
  local ok, doc = pcall(pandoc.read, body, "latex+raw_tex")
  if not ok then
    return nil
  end
  local blocks = expand(doc.blocks)
  local words = {}
  for _, a in ipairs(args) do
    local text = argument_text("{" .. a .. "}")
    if text ~= "" then
      table.insert(words, text)
    end
  end
  if name == "frame" then
    if #words > 0 then
      blocks:insert(1, pandoc.Header(2, { pandoc.Str(table.concat(words, " ")) }))
    elseif blocks[1] and blocks[1].t == "Header" then
      blocks[1].level = 2 -- its \frametitle
    end
    return blocks
  end
  if #words == 0 then
    return blocks
  end
  return { pandoc.DefinitionList({ { { pandoc.Str(table.concat(words, " ")) }, { blocks } } }) }
end

local function RawBlock(el)
  if not is_latex(el) then
    return nil
  end
  local blocks = environment(el.text)
  if blocks then
    return blocks
  end
  local name = el.text:match("^%s*\\(%a+)")
  local text = argument_text(el.text)
  if text == "" then
    return {}
  end
  if name == "frametitle" then
    return pandoc.Header(2, { pandoc.Str(text) })
  end
  return pandoc.Para({ pandoc.Str(text) })
end

-- Sections numbered as LaTeX numbers them (\section 1, \subsection 1.1), for \ref; starred ones
-- (class unnumbered) are not.
local function number_sections(blocks)
  local counters = {}
  for _, b in ipairs(blocks) do
    if b.t == "Header" and not b.classes:includes("unnumbered") then
      counters[b.level] = (counters[b.level] or 0) + 1
      for deeper = b.level + 1, 9 do
        counters[deeper] = nil
      end
      local parts = {}
      for level = 1, b.level do
        table.insert(parts, tostring(counters[level] or 0))
      end
      if b.identifier ~= "" then
        SECTION_NUMBERS[b.identifier] = table.concat(parts, ".")
      end
    end
  end
end

local function Cite(el)
  local keys = {}
  for _, c in ipairs(el.citations) do
    table.insert(keys, c.id)
  end
  return pandoc.Str("[" .. table.concat(keys, ", ") .. "]")
end

expand = function(blocks)
  return blocks:walk({ RawInline = RawInline, RawBlock = RawBlock, Cite = Cite })
end

local function latex_words(doc)
  number_sections(doc.blocks)
  return doc:walk({ RawInline = RawInline, RawBlock = RawBlock, Cite = Cite })
end

return { { Pandoc = latex_words } }
