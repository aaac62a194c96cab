#!/usr/bin/env python3
"""A front for s3rver that checks what s3rver does not: every request's AWS
Signature V4, recomputed here from the known secret with hmac/hashlib,
independently of libcurl (s3rver accepts any V4 signature).  Then it
forwards the request, path style and unsigned, to s3rver.

The algorithm follows AWS's documentation ("Authenticating Requests: Using
the Authorization Header (AWS Signature Version 4)", "Create a canonical
request"): canonical URI and query URI-encoded with unreserved characters
kept ('/' kept in the path only, '%2F' in the query), the query sorted by
name, the signed headers lowercased and trimmed, the payload hash from
x-amz-content-sha256, which S3 requires.  A query or path not sent
canonical fails here as it fails at S3, since the client's signature then
covers other bytes than the canonical ones.

Besides, it does what S3 does and s3rver does not: If-Match (412), and a
bucket in a virtual-hosted name (BUCKET.localhost:PORT).  Faults for the
tests come from a JSON control file read at each request:
  {"cut": {"key": K, "after": N, "times": T, "replace_with": PATH}}
      a GET of key K sends its headers and N body bytes, then the
      connection is dropped (T times); with replace_with, the object is
      overwritten with that file's bytes first.
  {"fail_5xx": T}   the next T requests get 503 SlowDown.
  {"max_keys": N}   listings are paged N keys a page.
Every request is appended to the log file as
"METHOD /BUCKET/KEY QUERY STATUS host=HOST range=RANGE".

Usage: s3proxy.py BACKEND_PORT PORTFILE LOGFILE CONTROLFILE ACCESS SECRET REGION
"""
import datetime
import hashlib
import hmac
import http.client
import http.server
import json
import os
import socket
import sys
import threading
import urllib.parse

BACKEND, PORTFILE, LOG, CONTROL, ACCESS, SECRET, REGION = sys.argv[1:8]
BACKEND = int(BACKEND)
lock = threading.Lock()
used = {"fail_5xx": 0}   # and one count per cut spec (a new spec starts at 0)


def control():
    try:
        with open(CONTROL) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def enc(s, keep_slash):
    safe = "-_.~" + ("/" if keep_slash else "")
    return urllib.parse.quote(s, safe=safe)


def xml_error(code, message, region=None):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>%s</Code>'
            '<Message>%s</Message>%s</Error>'
            % (code, message, "<Region>%s</Region>" % region if region else "")).encode()


def check_signature(h):
    """None when the request is signed right, else (status, code, message)."""
    auth = h.headers.get("Authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return 403, "AccessDenied", "not signed with AWS4-HMAC-SHA256"
    fields = {}
    for part in auth[len("AWS4-HMAC-SHA256 "):].split(","):
        k, _, v = part.strip().partition("=")
        fields[k] = v
    cred = fields.get("Credential", "").split("/")
    if len(cred) != 5 or cred[4] != "aws4_request" or cred[3] != "s3":
        return 400, "AuthorizationHeaderMalformed", "bad credential scope"
    if cred[0] != ACCESS:
        return 403, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist"
    if cred[2] != REGION:
        return (400, "AuthorizationHeaderMalformed",
                "the region '%s' is wrong; expecting '%s'" % (cred[2], REGION), REGION)
    signed = fields.get("SignedHeaders", "").split(";")
    for need in ("host", "x-amz-date", "x-amz-content-sha256"):
        if need not in signed:
            return 403, "AccessDenied", "header %s not signed" % need
    amz_date = h.headers.get("x-amz-date", "")
    if not amz_date.startswith(cred[1]):
        return 403, "SignatureDoesNotMatch", "date and credential scope differ"
    when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(
        tzinfo=datetime.timezone.utc)
    if abs((datetime.datetime.now(datetime.timezone.utc) - when).total_seconds()) > 900:
        return 403, "RequestTimeTooSkewed", "clock skew"
    payload = h.headers.get("x-amz-content-sha256")
    if payload != hashlib.sha256(b"").hexdigest():
        return 400, "InvalidRequest", "x-amz-content-sha256 missing or not the empty body's"
    raw_path, _, raw_query = h.path.partition("?")
    canon_path = enc(urllib.parse.unquote(raw_path), True)
    pairs = [p.partition("=") for p in raw_query.split("&")] if raw_query else []
    canon_query = "&".join(
        "%s=%s" % (enc(urllib.parse.unquote(k), False), enc(urllib.parse.unquote(v), False))
        for k, _, v in sorted(pairs, key=lambda p: (enc(urllib.parse.unquote(p[0]), False),
                                                      enc(urllib.parse.unquote(p[2]), False))))
    headers = ""
    for name in signed:
        values = h.headers.get_all(name) or []
        headers += "%s:%s\n" % (name, ",".join(" ".join(v.split()) for v in values))
    creq = "\n".join([h.command, canon_path, canon_query, headers, ";".join(signed), payload])
    scope = "/".join(cred[1:])
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                     hashlib.sha256(creq.encode()).hexdigest()])
    key = ("AWS4" + SECRET).encode()
    for part in cred[1:]:
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    want = hmac.new(key, sts.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(want, fields.get("Signature", "")):
        return 403, "SignatureDoesNotMatch", "The request signature we calculated does not match"
    token = os.environ.get("S3PROXY_SESSION_TOKEN")
    if token and (h.headers.get("x-amz-security-token") != token or
                  "x-amz-security-token" not in signed):
        return 403, "InvalidToken", "session token missing, wrong or not signed"
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, path, query, status):
        with lock:
            with open(LOG, "a") as f:
                f.write("%s %s %s %s host=%s range=%s\n"
                        % (self.command, path, query or "-", status,
                           self.headers.get("Host", "").split(":")[0],
                           self.headers.get("Range", "-").replace(" ", "")))

    def reply(self, status, body, path, query, extra=None):
        self.record(path, query, status)
        self.send_response(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body) if self.command != "HEAD" else 0))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        self.handle_any()

    def do_HEAD(self):
        self.handle_any()

    def handle_any(self):
        raw_path, _, raw_query = self.path.partition("?")
        host = self.headers.get("Host", "").split(":")[0]
        # The bucket from the host name (virtual-hosted style) or the path.
        if host.endswith(".localhost"):
            path = "/" + host[: -len(".localhost")] + raw_path
        else:
            path = raw_path
        bad = check_signature(self)
        if bad:
            return self.reply(bad[0], xml_error(*bad[1:]), path, raw_query)
        ctl = control()
        with lock:
            if ctl.get("fail_5xx", 0) == 0:
                used["fail_5xx"] = 0
            fail = used["fail_5xx"] < ctl.get("fail_5xx", 0)
            if fail:
                used["fail_5xx"] += 1
        if fail:
            return self.reply(503, xml_error("SlowDown", "Please reduce your request rate."),
                              path, raw_query)
        query = raw_query
        if ctl.get("max_keys") and "list-type=2" in query:
            query += "&max-keys=%d" % ctl["max_keys"]
        fwd = {k: v for k, v in self.headers.items()
               if k.lower() in ("range",)}
        conn = http.client.HTTPConnection("127.0.0.1", BACKEND)
        conn.request(self.command, path + ("?" + query if query else ""), headers=fwd)
        resp = conn.getresponse()
        body_len = resp.getheader("Content-Length")
        match = self.headers.get("If-Match")
        if match and resp.status in (200, 206) and resp.getheader("ETag") != match:
            conn.close()
            return self.reply(412, xml_error("PreconditionFailed",
                                             "At least one of the pre-conditions you specified "
                                             "did not hold"), path, raw_query)
        if resp.status == 404 and self.command == "HEAD":
            conn.close()
            return self.reply(404, b"", path, raw_query)
        self.record(path, raw_query, resp.status)
        self.send_response(resp.status)
        for k in ("Content-Type", "Content-Length", "Content-Range", "ETag", "Last-Modified",
                  "Accept-Ranges"):
            if resp.getheader(k) is not None:
                self.send_header(k, resp.getheader(k))
        self.end_headers()
        if self.command == "HEAD":
            conn.close()
            return
        cut = ctl.get("cut")
        key = path.split("/", 2)[2] if path.count("/") >= 2 else ""
        spec = json.dumps(cut, sort_keys=True)
        with lock:
            cutting = (cut and cut.get("key") == key and resp.status in (200, 206)
                       and used.get(spec, 0) < cut.get("times", 1))
            if cutting:
                used[spec] = used.get(spec, 0) + 1
        if cutting:
            data = resp.read(cut["after"])
            self.wfile.write(data)
            self.wfile.flush()
            if cut.get("replace_with"):
                with open(cut["replace_with"], "rb") as f:
                    body = f.read()
                c2 = http.client.HTTPConnection("127.0.0.1", BACKEND)
                c2.request("PUT", path, body=body)
                c2.getresponse().read()
                c2.close()
            conn.close()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        left = int(body_len) if body_len else None
        while left is None or left > 0:
            chunk = resp.read(65536 if left is None else min(65536, left))
            if not chunk:
                break
            self.wfile.write(chunk)
            if left is not None:
                left -= len(chunk)
        conn.close()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
