/** nginx as a baseline for Cairn's proxy (bench:proxy, bench:ws): the reverse proxy most operators know. */
import { execFileSync, spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

const listen = async (server: Server) => {
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return (server.address() as AddressInfo).port
}

/**
 * nginx in front of the app on `appPort` (kept-open upstream connections; with `websocket`, upgrades relayed), or
 * undefined where it is not installed (Debian: `apt-get install nginx-light`).
 */
export const startNginx = async (appPort: number, workers: number, options: { readonly websocket?: boolean } = {}) => {
  try {
    execFileSync("sh", ["-c", "command -v nginx"], { stdio: "ignore" })
  } catch {
    return undefined
  }
  const dir = mkdtempSync(join(tmpdir(), "cairn-bench-nginx-"))
  const probe = createServer()
  const port = await listen(probe)
  probe.close()
  writeFileSync(join(dir, "nginx.conf"), `
worker_processes ${workers};
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
  upstream app { server 127.0.0.1:${appPort}; keepalive 32; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Host $host;
      ${options.websocket === true
    ? `proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection "upgrade"; proxy_read_timeout 1h;`
    : `proxy_set_header Connection "";`}
    }
  }
}
`)
  const child = spawn("nginx", ["-c", join(dir, "nginx.conf"), "-p", dir], { stdio: "ignore" })
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false)
    if (up) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { port, stop: () => (child.kill("SIGQUIT"), rmSync(dir, { recursive: true, force: true })) }
}
