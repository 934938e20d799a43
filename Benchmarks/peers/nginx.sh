# The peer scripts' nginx, sourced (not run): one worker on loopback, keep-alive for the whole run, no access log,
# every temporary path inside the script's work directory (nginx workers drop root: the caller makes its files
# readable with chmod -R a+rX).
#
#   . "$here/nginx.sh"
#   nginx_start "$work" 'location /s/ { try_files /small.json =404; }'   # serves $work/www; sets nginx_port
#   nginx_wait "http://127.0.0.1:$nginx_port/s/1"                          # or exit with nginx's error log
#   trap 'nginx_stop "$work"; rm -rf "$work"' EXIT
#
# nginx_start WORK SERVER_LINES [HTTP_LINES]: SERVER_LINES go inside the server block (locations, more listen
# lines), HTTP_LINES inside the http block (TLS settings, more server blocks). The port is $nginx_port when the
# caller set it (so that its lines can name the next ports), else a random one.

nginx_start() {
    local work=$1 server_lines=$2 http_lines=${3:-}
    : "${nginx_port:=$((20000 + RANDOM % 20000))}"
    nginx_work=$work
    mkdir -p "$work/www" "$work/logs"
    cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off; keepalive_requests 1000000; keepalive_timeout 60s; default_type application/json;
    client_body_temp_path $work/logs; proxy_temp_path $work/logs; fastcgi_temp_path $work/logs;
    uwsgi_temp_path $work/logs; scgi_temp_path $work/logs;
$http_lines
    server {
        listen 127.0.0.1:$nginx_port; root $work/www; disable_symlinks off;
$server_lines
    }
}
CONF
    nginx -c "$work/nginx.conf" -p "$work"
}

# nginx_wait URL: waits (up to 10 s) until URL answers 2xx; else prints nginx's error log and exits.
nginx_wait() {
    for _ in $(seq 50); do
        curl -sf "$1" >/dev/null && return 0
        sleep 0.2
    done
    echo "error: nginx does not serve $1: $(cat "${nginx_work:-/dev/null}/logs/error.log" 2>/dev/null)" >&2
    exit 1
}

# nginx_stop WORK: stops the nginx that nginx_start started there (harmless when none runs).
nginx_stop() {
    [ -f "$1/nginx.pid" ] && nginx -c "$1/nginx.conf" -p "$1" -s stop 2>/dev/null
    return 0
}
