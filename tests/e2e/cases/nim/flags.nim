# -d:danger defines the symbol "danger" at compile time.
when defined(danger):
  echo "danger"
else:
  echo "release"
