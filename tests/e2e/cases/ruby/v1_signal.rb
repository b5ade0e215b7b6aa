# A signal with the default action ends the process: SIGABRT.
Process.kill(:ABRT, Process.pid)
sleep 10
