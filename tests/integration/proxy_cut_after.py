# A TCP proxy to PostgreSQL that, once, lets the first release.sql statement
# (or the first statement holding argv[3]) commit and then cuts the client's
# connection before the answer reaches it; with argv[4], a file, only once
# that file exists (statements before it pass).
import asyncio, os, sys
LPORT, PPORT = int(sys.argv[1]), int(sys.argv[2])
MARK = sys.argv[3].encode() if len(sys.argv) > 3 else b"as b(id, attempt)"
ARM = sys.argv[4] if len(sys.argv) > 4 else None
done = False
async def pipe(r, w, on_chunk=None):
    try:
        while True:
            d = await r.read(65536)
            if not d: break
            if on_chunk:
                d = on_chunk(d)
                if d is None: break
            w.write(d); await w.drain()
    except Exception: pass
    finally:
        try: w.close()
        except Exception: pass
async def handle(cr, cw):
    sr, sw = await asyncio.open_connection("127.0.0.1", PPORT)
    st = {"armed": False, "buf": b""}
    def c2s(d):
        global done
        if not done and MARK in d and (ARM is None or os.path.exists(ARM)):
            st["armed"] = True; done = True
            print("proxy: statement seen", flush=True)
        return d
    def s2c(d):
        if st["armed"]:
            st["buf"] += d
            if b"Z\x00\x00\x00\x05" in st["buf"]:
                print("proxy: statement committed (ReadyForQuery); cutting the client off", flush=True)
                cw.transport.abort(); sw.transport.abort()
                return None
            return b""
        return d
    await asyncio.gather(pipe(cr, sw, c2s), pipe(sr, cw, s2c))
async def main():
    srv = await asyncio.start_server(handle, "127.0.0.1", LPORT)
    async with srv: await srv.serve_forever()
asyncio.run(main())
