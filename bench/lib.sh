# Shared by the measuring scripts (bench/ab.sh, bench/overload.sh): an nginx origin serving
# one page as identity, and ssatd in offload mode with the builtin edge in front of it.
# Source it after setting work (a temporary directory with www/ and logs/ in it).

# origin_page PAGE PORT: the page, with its most named host turned into the origin's
# address (so that there is something to rewrite), as $work/www/index.html, and the nginx
# configuration serving it on 127.0.0.1:PORT as $work/origin.conf.
origin_page() {
  local host
  host=$(grep -oE '(href|content)="https?://[^/"]+' "$1" | sed -E 's#.*://##' | sort | uniq -c | sort -rn | head -1 | awk '{print $2}')
  sed "s#$host#127.0.0.1:$2#g" "$1" > "$work/www/index.html"
  cat > "$work/origin.conf" <<NGX
worker_processes 1; pid $work/origin.pid; error_log $work/logs/oerr.log; daemon off;
events { worker_connections 1024; }
http { access_log off; default_type text/html;
  server { listen 127.0.0.1:$2; root $work/www; location / { try_files /index.html =404; } } }
NGX
}

# offload_toml LISTEN_PORT ADMIN_PORT ORIGIN_PORT [SERVER_LINES]: the configuration of an
# ssatd in offload mode with the builtin edge and one slot, on standard output.
offload_toml() {
  cat <<TOML
[server]
listen = "127.0.0.1:$1"
admin_listen = "127.0.0.1:$2"
drain_period = "0s"
${4:-}
[publisher]
domain = "www.pub.example"
origin_url = "http://127.0.0.1:$3"
ssat_compression_offload_enabled = true
[platform]
delivery_compression = "builtin"
[auction]
enabled = true
provider = "none"
[[creative_opportunities.slot]]
id = "top"
page_patterns = ["/*", "/**"]
formats = [[728, 90]]
gam_unit_path = "/1234/top"
TOML
}

# wait_ready ADMIN_PORT: until ssatd's /readyz answers, for at most 5 s.
wait_ready() {
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$1/readyz" >/dev/null && return; sleep 0.1; done
}
