const parts: string[] = ["O", "K"];
console.log(parts.join(""));
