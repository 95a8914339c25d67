package discord

import (
	"container/list"
	"sync"
)

// channelCache remembers the kind of the last n guild channels looked up,
// so a chatty channel costs one REST call, not one per message.
type channelCache struct {
	mu    sync.Mutex
	n     int
	order *list.List // front = newest; values are channel IDs
	index map[string]*list.Element
	info  map[string]channelInfo
}

func newChannelCache(n int) *channelCache {
	return &channelCache{n: n, order: list.New(), index: map[string]*list.Element{}, info: map[string]channelInfo{}}
}

func (c *channelCache) get(id string) (channelInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.index[id]
	if !ok {
		return channelInfo{}, false
	}
	c.order.MoveToFront(e)
	return c.info[id], true
}

func (c *channelCache) put(id string, info channelInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.index[id]; ok {
		c.order.MoveToFront(e)
	} else {
		c.index[id] = c.order.PushFront(id)
	}
	c.info[id] = info
	if c.order.Len() > c.n {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.index, old.Value.(string))
		delete(c.info, old.Value.(string))
	}
}
