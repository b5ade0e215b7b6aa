word = "".join(["O", "K"])
print(word)
