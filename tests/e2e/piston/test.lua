local word = table.concat({"O", "K"})
print(word)
