say <O K>.join;
