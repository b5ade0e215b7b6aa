BEGIN { printf "%s%s\n", "O", "K" }
