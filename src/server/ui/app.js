import "./util.js";
