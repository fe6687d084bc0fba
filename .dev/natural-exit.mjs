// vlc as bin/vlc.js ran it before it left with process.exit: Node's own teardown after main()
// returns, for an A/B of the exit's time (.dev/r5-write31.sh). Usage: node .dev/natural-exit.mjs compress ...
const { main } = await import('../dist/cli.js');
process.exitCode = await main(process.argv);
