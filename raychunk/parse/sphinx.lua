-- What Sphinx shows of a reStructuredText file, for pandoc's RST reader (raychunk.parse.rst).
--
-- pandoc knows docutils' directives; Sphinx's it keeps as a Div of the directive's name whose first
-- paragraph is the argument, and a role as Code of class interpreted-text. Here:
--   * a version note reads as Sphinx words it: "Added in version 3.2: ..." (not a bare "3.2");
--   * an object description (marked raychunk-object by raychunk.parse.rst) is a definition list:
--     its signature the term, its body the definition, so the two are never chunked apart;
--   * navigation and what the build fills in from other files (toctree, literalinclude, index,
--     module targets) give no text; `only` keeps its body, not its condition; a grammar
--     (productionlist) keeps its lines;
--   * a role reads as its text: `title <target>` its title, `~a.b.c` its last part, `!x` x.

local VERSION = {
  versionadded = "Added in version",
  versionchanged = "Changed in version",
  deprecated = "Deprecated since version",
  versionremoved = "Removed in version",
}

local DROP = {}
for _, name in ipairs({
  "toctree", "literalinclude", "include", "index", "highlight", "default-role", "default-domain",
  "module", "currentmodule", "sectionauthor", "moduleauthor", "codeauthor", "tabularcolumns",
  "autosummary", "program", "cmake-module", "graphviz", "digraph", "inheritance-diagram",
}) do DROP[name] = true end

local LEAD = "raychunk-version-lead"

local BODY_ONLY = { only = true, ifconfig = true }

-- raychunk.parse.rst renames every object description (function, class, option, a CMake command ...)
-- to this, its signature a literal.
local OBJECT = "raychunk-object"

local PLAIN_ROLES = { ref = true, doc = true, term = true, numref = true, download = true, abbr = true }

-- `py-module` (raychunk.parse.rst renamed `py:module`, whose colon pandoc does not take) is a `module`.
local function directive(name)
  if DROP[name] then
    return name
  end
  local rest = name:match("^%a+%-(.+)$")
  if rest and DROP[rest] then
    return rest
  end
  return name
end

local function first_inlines(blocks)
  local b = blocks[1]
  if b and (b.t == "Para" or b.t == "Plain") then
    return b.content
  end
  return nil
end

-- A grammar's lines, which pandoc reads as one paragraph, as Sphinx shows them: preformatted.
local function grammar(blocks)
  local inlines = first_inlines(blocks)
  if not inlines then
    return pandoc.Div(blocks)
  end
  local parts = {}
  for _, il in ipairs(inlines) do
    parts[#parts + 1] = (il.t == "SoftBreak" or il.t == "LineBreak") and "\n" or pandoc.utils.stringify(il)
  end
  return pandoc.CodeBlock(table.concat(parts), pandoc.Attr("", { "language-text" }))
end

local function rest_of(blocks)
  local out = pandoc.List()
  for i = 2, #blocks do
    out:insert(blocks[i])
  end
  return out
end

local function version_note(label, blocks)
  local inlines = first_inlines(blocks)
  if not inlines or #inlines == 0 or inlines[1].t ~= "Str" then
    return pandoc.Div(pandoc.List({ pandoc.Para({ pandoc.Str(label .. ".") }) }) .. blocks)
  end
  local version = inlines[1].text
  local after = pandoc.List()
  for i = 2, #inlines do
    after:insert(inlines[i])
  end
  while #after > 0 and (after[1].t == "Space" or after[1].t == "SoftBreak" or after[1].t == "LineBreak") do
    after:remove(1)
  end
  local head = pandoc.List({ pandoc.Str(label), pandoc.Space() })
  if #after > 0 then
    head:insert(pandoc.Str(version:gsub("[:,]$", "") .. ":"))
    head:insert(pandoc.Space())
    head:extend(after)
    return pandoc.Div(pandoc.List({ pandoc.Para(head) }) .. rest_of(blocks))
  end
  head:insert(pandoc.Str(version:gsub("[.:,]$", "") .. "."))
  if #blocks > 1 then
    return pandoc.Div(pandoc.List({ pandoc.Para(head) }) .. rest_of(blocks))
  end
  -- a note that is only its version leads the paragraph after it (Blocks, below)
  return pandoc.Div({ pandoc.Para(head) }, pandoc.Attr("", { LEAD }))
end

-- The signature: the first paragraph, or an option's (`--build <dir>` is read by pandoc as an
-- option list of one item, with nothing under it).
local function signature_of(blocks)
  local inlines = first_inlines(blocks)
  if inlines then
    return pandoc.utils.stringify(inlines)
  end
  local b = blocks[1]
  if b and b.t == "DefinitionList" and #b.content == 1 then
    local term, definitions = b.content[1][1], b.content[1][2]
    if not pandoc.utils.stringify(definitions):match("%S") then
      return pandoc.utils.stringify(term)
    end
  end
  return nil
end

local function object_description(blocks)
  local signature = signature_of(blocks)
  if not signature then
    return pandoc.Div(blocks)
  end
  local body = rest_of(blocks)
  if #body == 0 then
    return pandoc.Para({ pandoc.Code(signature) })
  end
  return pandoc.DefinitionList({ { { pandoc.Code(signature) }, { body } } })
end

function Div(el)
  local name = el.classes[1]
  if not name then
    return nil
  end
  name = directive(name)
  if DROP[name] then
    return {}
  end
  if VERSION[name] then
    return version_note(VERSION[name], el.content)
  end
  if name == "productionlist" then
    return grammar(el.content)
  end
  if BODY_ONLY[name] then
    return rest_of(el.content)
  end
  if name == OBJECT then
    return object_description(el.content)
  end
  return nil
end

-- "creates a server. ::" before a literal block: docutils shows neither colon (the "partially
-- minimized" form), pandoc leaves one, "creates a server. :".
local function without_minimized_colons(para, nxt)
  local c = para.content
  local n = #c
  if nxt and nxt.t == "CodeBlock" and n >= 2 and c[n].t == "Str" and c[n].text == ":"
      and (c[n - 1].t == "Space" or c[n - 1].t == "SoftBreak") then
    c:remove(n)
    c:remove(n - 1)
  end
  return para
end

-- "BYPRODUCTS / Added in version 3.2. / Specify the files ...": the bare note opens the paragraph
-- after it, so a definition's term stays joined to what it says, not to the version alone.
function Blocks(blocks)
  local out = pandoc.List()
  local i = 1
  while i <= #blocks do
    local b = blocks[i]
    local nxt = blocks[i + 1]
    if b.t == "Div" and b.classes:includes(LEAD) then
      if nxt and (nxt.t == "Para" or nxt.t == "Plain") then
        local merged = pandoc.List(b.content[1].content)
        merged:insert(pandoc.Space())
        merged:extend(nxt.content)
        out:insert(pandoc.Para(merged))
        i = i + 2
      else
        out:insert(b.content[1])
        i = i + 1
      end
    elseif b.t == "Para" then
      out:insert(without_minimized_colons(b, nxt))
      i = i + 1
    else
      out:insert(b)
      i = i + 1
    end
  end
  return out
end

function Code(el)
  if not el.classes:includes("interpreted-text") then
    return nil
  end
  local text = el.text
  local title = text:match("^(.-)%s*<[^<>]*>$")
  if title and title:match("%S") then
    text = title
  else
    text = text:gsub("^!", "")
    if text:sub(1, 1) == "~" then
      text = text:sub(2)
      text = text:match("([^.]+)$") or text
    end
  end
  if PLAIN_ROLES[el.attributes.role or ""] then
    return pandoc.Str(text)
  end
  return pandoc.Code(text)
end
