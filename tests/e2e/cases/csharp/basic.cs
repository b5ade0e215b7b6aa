using System;
using System.Linq;

class Program
{
    static int Main()
    {
        string line;
        while ((line = Console.ReadLine()) != null) {
            string w = line.Trim();
            if (w == "crash")
                return 3;
            Console.WriteLine(new string(w.Reverse().ToArray()));
        }
        return 0;
    }
}
