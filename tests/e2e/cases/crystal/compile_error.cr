x : Int32 = "not a number"
puts x
