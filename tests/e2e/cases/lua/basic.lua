for line in io.lines() do
  local w = line:match("^%s*(.-)%s*$")
  if w == "crash" then
    error("crash requested")
  end
  print(w:reverse())
end
