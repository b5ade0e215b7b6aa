require_relative "helper"

puts Helper.greet(STDIN.read.strip)
