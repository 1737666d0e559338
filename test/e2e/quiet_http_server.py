# A live service for the recorder to attach to: Python's threading HTTP server (a thread per
# request) on a free port of 127.0.0.1, serving its own directory, with no request log. Prints
# "serving on PORT" once it listens.
import http.server
import os
import sys


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


os.chdir(os.path.dirname(os.path.abspath(__file__)))
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
print("serving on", server.server_address[1], flush=True)
sys.stdout.close()
server.serve_forever()
