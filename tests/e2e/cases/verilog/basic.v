// Prints the sum of two integers per line of stdin (file descriptor
// 32'h8000_0000 in Icarus); the word "crash" stops with $fatal (status 1).
module main;
	localparam STDIN = 32'h8000_0000;
	integer a, b, n;
	reg [8*16-1:0] word;

	initial begin
		n = $fscanf(STDIN, "%d %d", a, b);
		while (n == 2) begin
			$display("%0d", a + b);
			n = $fscanf(STDIN, "%d %d", a, b);
		end
		if ($fscanf(STDIN, "%s", word) == 1 && word == "crash")
			$fatal(1, "crash requested");
		$finish;
	end
endmodule
