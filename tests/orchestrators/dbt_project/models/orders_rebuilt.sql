-- the same rows as orders, in another order and as three files
select /*+ REPARTITION(3) */ id, k from {{ ref('orders') }}
