from sentforge.cli import main

main()
