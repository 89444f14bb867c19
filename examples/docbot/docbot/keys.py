"""Typed keys for what the aiohttp application holds."""

from aiohttp import web

CFG = web.AppKey("cfg", object)            # config.Config
STORE = web.AppKey("store", object)        # sessions.Store
PIPELINE = web.AppKey("pipeline", object)  # pipeline.Pipeline
TELEGRAM = web.AppKey("telegram", object)  # telegram.TelegramClient
HTTP = web.AppKey("http", object)          # aiohttp.ClientSession: channel APIs + LLM
FETCH_HTTP = web.AppKey("fetch_http", object)  # aiohttp.ClientSession: documents
