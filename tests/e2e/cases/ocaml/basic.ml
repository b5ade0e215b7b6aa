let reverse s =
  let n = String.length s in
  String.init n (fun i -> s.[n - 1 - i])

let () =
  try
    while true do
      let w = String.trim (input_line stdin) in
      if w = "crash" then exit 3;
      print_endline (reverse w)
    done
  with End_of_file -> ()
