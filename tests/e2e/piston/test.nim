import strutils
echo ["O", "K"].join("")
