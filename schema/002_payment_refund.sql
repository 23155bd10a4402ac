-- Payments that cannot be kept (docs/design.md §6, §9): a payment for an order that timed out, or a second
-- payment for an order already paid. The shop refunds them; one row per order and payment.
-- status: needed | refunded
CREATE TABLE seckill_refund (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  order_no    VARCHAR(32)     NOT NULL,
  payment_id  VARCHAR(64)     NOT NULL,
  activity_id BIGINT UNSIGNED NOT NULL,
  user_id     BIGINT UNSIGNED NOT NULL,
  reason      VARCHAR(32)     NOT NULL,
  status      VARCHAR(16)     NOT NULL DEFAULT 'needed',
  created_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_order_payment (order_no, payment_id),
  KEY idx_activity_status (activity_id, status)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
