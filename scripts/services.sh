#!/usr/bin/env bash
# Makes sure the services the project needs are reachable: Redis on 127.0.0.1:6379 and MariaDB/MySQL
# on 127.0.0.1:3306 (root, no password). Starts local ones when installed but not running; installs
# the Debian packages when missing and we are root with apt; otherwise says what to install.
# Override the targets with REDIS_PORT / MYSQL_PORT. Used by .ci/run and `npm start`.
set -euo pipefail

REDIS_PORT="${REDIS_PORT:-6379}"
MYSQL_PORT="${MYSQL_PORT:-3306}"

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for() { # port name
  for _ in $(seq 1 60); do listening "$1" && return 0; sleep 0.5; done
  echo "services: $2 did not come up on 127.0.0.1:$1" >&2
  return 1
}

install_pkg() { # binary package
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "services: installing $2 (Debian package)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null; }
  fi
  command -v "$1" >/dev/null 2>&1 || { echo "services: $1 is not installed — install the Debian package '$2' (or point REDIS_URL/MYSQL_URL at a running server)" >&2; return 1; }
}

# A Redis this script starts keeps an append-only file (AOF, fsync every second: a crash loses at most
# about one second of writes; docs/durability.md). A Redis already running is used as it is — the
# project machines' preinstalled one on 6379 keeps nothing on disk; `CONFIG GET appendonly` tells.
if listening "$REDIS_PORT"; then
  echo "services: redis is up on 127.0.0.1:$REDIS_PORT (appendonly: $(redis-cli -p "$REDIS_PORT" CONFIG GET appendonly 2>/dev/null | tail -1 || echo unknown))"
else
  install_pkg redis-server redis-server
  echo "services: starting redis-server on 127.0.0.1:$REDIS_PORT (AOF, appendfsync everysec)"
  mkdir -p /tmp/seckill-redis
  redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" \
    --appendonly yes --appendfsync everysec \
    --dir /tmp/seckill-redis --logfile /tmp/seckill-redis/redis.log
  wait_for "$REDIS_PORT" redis
fi

if listening "$MYSQL_PORT"; then
  echo "services: mariadb/mysql is up on 127.0.0.1:$MYSQL_PORT"
else
  PATH="$PATH:/usr/sbin"
  install_pkg mariadbd mariadb-server
  if [ ! -d /var/lib/mysql/mysql ]; then
    echo "services: initialising the MariaDB data directory"
    mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
  fi
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
  echo "services: starting mariadbd"
  if command -v start-stop-daemon >/dev/null 2>&1; then
    start-stop-daemon --start --oknodo --background --exec "$(command -v mariadbd)" -- --user=mysql --port="$MYSQL_PORT"
  else
    (mariadbd --user=mysql --port="$MYSQL_PORT" >/tmp/mariadbd.log 2>&1 &)
  fi
  wait_for "$MYSQL_PORT" mariadb
fi

# root must reach MariaDB over TCP without a password (it may only be allowed through the socket).
if ! mysql_out=$(mariadb -h 127.0.0.1 -P "$MYSQL_PORT" -u root -e 'SELECT 1' 2>&1); then
  if command -v mariadb >/dev/null 2>&1 && mariadb -u root -e 'SELECT 1' >/dev/null 2>&1; then
    echo "services: allowing password-less TCP login for root"
    mariadb -u root -e "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('') OR unix_socket"
  else
    echo "services: cannot log in to MariaDB as root over TCP: $mysql_out" >&2
    exit 1
  fi
fi
echo "services: ready"
