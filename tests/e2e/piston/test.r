cat(paste0("O", "K"), "\n", sep = "")
