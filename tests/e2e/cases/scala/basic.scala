// Reads a line of two integers and prints their sum; "crash" ends with
// exit status 3. The entry point is the object Main.
object Main {
  def main(args: Array[String]): Unit = {
    val line = scala.io.StdIn.readLine().trim
    if (line == "crash")
      sys.exit(3)
    val Array(a, b) = line.split("\\s+").map(_.toLong)
    println(a + b)
  }
}
