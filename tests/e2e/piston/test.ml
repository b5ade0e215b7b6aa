let () = print_endline (String.concat "" ["O"; "K"])
