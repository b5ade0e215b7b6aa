let x: int = "not a number"
echo x
