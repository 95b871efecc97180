-- A document's front matter as a reader sees it, for pandoc's readers of formats that keep it apart
-- from the body (raychunk.parse.latex, raychunk.parse.xmldoc: LaTeX, DocBook, JATS):
--   * the title block (title, authors, date, abstract), which a standalone page would put in a
--     <header> that no reader takes for text, opens the body: the title a level-1 heading with the
--     sections below it, one level down;
--   * footnotes close the document under a heading of their own, Notes, in order.

-- Footnotes out of the text, in order, to close the document under a heading of their own (a
-- reader finds them there, not as a list under the last section).
local function notes_apart(doc, level)
  local notes = {}
  doc = doc:walk({
    Note = function(note)
      table.insert(notes, note.content)
      return {}
    end,
  })
  if #notes > 0 then
    doc.blocks:insert(pandoc.Header(level, { pandoc.Str("Notes") }))
    doc.blocks:insert(pandoc.OrderedList(notes))
  end
  return doc
end

local function deeper(by)
  return function(h)
    h.level = h.level + by
    return h
  end
end

local function front_matter(doc)
  local meta = doc.meta
  if not meta.title then
    return notes_apart(doc, 1)
  end
  doc = notes_apart(doc, 1)
  local title = meta.title
  if pandoc.utils.type(title) ~= "Inlines" then
    title = { pandoc.Str(pandoc.utils.stringify(title)) }
  end
  local front = { pandoc.Header(1, title) }
  local shift = 1
  local first = doc.blocks[1]
  if first and first.t == "Header" and pandoc.utils.stringify(first) == pandoc.utils.stringify(title) then
    -- the body opens with the title itself (Typst's `= Title` under its document title): it is the
    -- heading, and the sections stay where they are below it
    front = { first }
    doc.blocks:remove(1)
    shift = 0
  end
  local authors = meta.author
  if authors then
    if pandoc.utils.type(authors) ~= "List" then
      authors = { authors }
    end
    local names = {}
    for _, a in ipairs(authors) do
      table.insert(names, pandoc.utils.stringify(a))
    end
    table.insert(front, pandoc.Para({ pandoc.Str(table.concat(names, ", ")) }))
  end
  if meta.date then
    table.insert(front, pandoc.Para({ pandoc.Str(pandoc.utils.stringify(meta.date)) }))
  end
  if meta.abstract then
    table.insert(front, pandoc.Header(2, { pandoc.Str("Abstract") }))
    local abstract = meta.abstract
    if pandoc.utils.type(abstract) == "Blocks" then
      -- a structured abstract's parts (Background, Methods ...) under its heading
      for _, b in ipairs(abstract:walk({ Header = deeper(2) })) do
        table.insert(front, b)
      end
    else
      table.insert(front, pandoc.Para({ pandoc.Str(pandoc.utils.stringify(abstract)) }))
    end
  end
  for _, b in ipairs(shift > 0 and doc.blocks:walk({ Header = deeper(shift) }) or doc.blocks) do
    table.insert(front, b)
  end
  return pandoc.Pandoc(front, pandoc.Meta({}))
end

return { { Pandoc = front_matter } }
