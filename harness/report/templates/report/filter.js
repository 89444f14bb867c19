(function(){
var f=document.getElementById('filters');if(!f)return;f.hidden=false;
var q=document.getElementById('q'),boxes=f.querySelectorAll('input[type=checkbox]'),shown=document.getElementById('shown');
var cases=document.querySelectorAll('details.case');
function apply(){var on={},t=q.value.trim().toLowerCase(),total=0;
for(var i=0;i<boxes.length;i++)on[boxes[i].value]=boxes[i].checked;
for(var j=0;j<cases.length;j++){var d=cases[j];var ok=on[d.getAttribute('data-status')]!==false&&
(!t||d.textContent.toLowerCase().indexOf(t)>=0);d.hidden=!ok;if(ok)total++;}
var groups=document.querySelectorAll('section.layer-cases');
for(var k=0;k<groups.length;k++){var n=groups[k].querySelectorAll('details.case:not([hidden])').length;
groups[k].hidden=n===0;groups[k].querySelector('.n-shown').textContent=n;}
shown.textContent=total;}
var h=new URLSearchParams(location.hash.slice(1));if(h.get('q'))q.value=h.get('q');
if(h.get('status')){var want=h.get('status').split(',');for(var i=0;i<boxes.length;i++)boxes[i].checked=want.indexOf(boxes[i].value)>=0;}
q.addEventListener('input',apply);for(var i=0;i<boxes.length;i++)boxes[i].addEventListener('change',apply);apply();
})();
