Reads a line and prints it reversed
Cell 0 stays zero as the left end; the line goes into cells 1 and up
>,----------[++++++++++>,----------]
Print back to the left end then a newline
<[.<]++++++++++.
