import signal, subprocess, sys, time

p = subprocess.Popen(
    [sys.argv[1], "--config", "slow.toml", "refresh", "--provider", "tencent", "--no-alerts"],
    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
)
time.sleep(3)
p.send_signal(signal.SIGINT)
print("exit", p.wait())
