letters = ["O", "K"]
console.log letters.join ""
