echo "cli tests: placeholder"
