#!/usr/bin/env python3
"""For `make demo`: plays the user on another device during a headless login, against the
bundled emulator (never the real Google). Python standard library only.

    other_device.py paste  EMULATOR_URL -- cloudbackup login --paste ...
    other_device.py device EMULATOR_URL -- cloudbackup login --device ...

It runs the login, shows what it prints, and does what the user would: for `paste`, opens
the printed URL like a browser on a phone (which, after "Allow", ends on a 127.0.0.1 address
it cannot load) and pastes that address into the login's standard input; for `device`, types
the shown code at the emulator's device page. It never prints the address it pastes (it holds
the one-time code). Exits with the login's exit status.
"""

import http.client
import json
import re
import subprocess
import sys
import urllib.parse


def request(method, url, body=None):
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    target = parts.path + ("?" + parts.query if parts.query else "")
    connection.request(method, target, body=body, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    return response


def main():
    mode, emulator, separator, *command = sys.argv[1:]
    if mode not in ("paste", "device") or separator != "--" or not command:
        sys.exit(__doc__)
    login = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = None
    for line in login.stderr:
        print(line, end="", flush=True)
        if line.startswith(emulator + "/o/oauth2/v2/auth?"):
            url = line.strip()
        if mode == "paste" and "paste it here" in line:
            # The phone's browser: "Allow", then the redirect it cannot follow.
            address = request("GET", url).getheader("Location")
            print("(on the phone: Allow, then copy the address of the page that does not load)")
            login.stdin.write(address + "\n")
            login.stdin.flush()
        code = re.search(r"enter the code (\S+)", line)
        if mode == "device" and code:
            print(f"(on the phone: open the page, type {code.group(1)}, Allow)")
            body = json.dumps({"userCode": code.group(1)}).encode()
            request("POST", emulator + "/__emulator/device", body)
    login.stdin.close()
    return login.wait()


if __name__ == "__main__":
    sys.exit(main())
