puts "Hello, world!"
