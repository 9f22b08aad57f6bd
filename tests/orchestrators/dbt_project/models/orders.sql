select id, id % 7 as k from range(500)
