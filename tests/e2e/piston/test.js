const word = ["O", "K"].join("");
console.log(word);
